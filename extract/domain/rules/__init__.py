"""Wording rules: whose name it is, names the field has, the method decision, code-found items."""
