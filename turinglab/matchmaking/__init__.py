"""Matchmaking: the waiting room, human/AI assignment, Thompson sampling over AI witnesses."""

from turinglab.matchmaking.room import Match, Slot, WaitingRoom
from turinglab.matchmaking.thompson import Tally, WitnessStats, choose_witness

__all__ = ["Match", "Slot", "Tally", "WaitingRoom", "WitnessStats", "choose_witness"]
