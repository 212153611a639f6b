"""The server's defaults the command line shows in its help, without loading the server."""

TOKEN_ENV = "PAPERSIFT_TOKEN"
DEFAULT_PORT = 8765
