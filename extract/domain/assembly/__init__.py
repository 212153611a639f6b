"""From a model's draft to a grounded extraction: names, gains, attributes, methods, user fields."""
