"""papersift: research-paper abstracts to a grounded, queryable DuckDB dataset.

Everything papersift installs lives under this one name: ``papersift.extract`` (domain,
model access, runs, interface), ``papersift.schemas``, ``papersift.prompts``,
``papersift.warehouse`` and ``papersift.report``. In the source tree those are the
top-level folders of the same names; this folder links to them.
"""
