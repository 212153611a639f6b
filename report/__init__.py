"""The review report: one self-contained HTML page built from a warehouse.

Reads the warehouse through ``warehouse.report`` only; never imports an LLM client.
"""
