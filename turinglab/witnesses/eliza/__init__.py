"""ELIZA, Weizenbaum's 1966 program, with the DOCTOR script of the CACM appendix."""

from turinglab.witnesses.eliza.engine import Eliza, Response, doctor_script
from turinglab.witnesses.eliza.script import DOCTOR_PATH, Script, ScriptError, parse_script

__all__ = ["DOCTOR_PATH", "Eliza", "Response", "Script", "ScriptError", "doctor_script", "parse_script"]
