"""Finding the draft's words in the abstract: quote alignment, sentence spans, whole words."""
