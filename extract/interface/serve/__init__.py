"""`papersift serve`: the review UI and the JSON API over one warehouse, on uvicorn.

The server holds the warehouse's one read-write connection for as long as it runs, so
extractions started through its API and reviewers' corrections are written by this one
process; another `papersift run` on the same file is told which server holds it.
"""

from papersift.extract.interface.serve.app import create_app
from papersift.extract.interface.serve.config import ServeConfig, ServeError

__all__ = ["ServeConfig", "ServeError", "create_app"]
