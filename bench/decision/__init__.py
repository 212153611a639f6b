"""The calibrated keep/flag/refuse decision for drafted names: its drafts, training and scoring."""
