from turinglab.cli import app

app(prog_name="turinglab")
