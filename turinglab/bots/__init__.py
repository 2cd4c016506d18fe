"""Bot interrogators: play a study's witnesses as an interrogator would (the witness probe)."""
