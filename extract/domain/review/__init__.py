"""A reviewer's edits grounded again as a model's are; a reviewed paper as a few-shot example."""
