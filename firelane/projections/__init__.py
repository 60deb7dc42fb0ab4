"""Folds over an encounter's log: turn state, replay, audit log, campaign roster."""
