"""The providers an endpoint can be, named once (the CLI's choices and each option's
applicability come from here). Imports nothing, so the CLI can declare options cheaply."""

LOCAL = ("local",)
REMOTE = ("openai", "compatible")
PROVIDERS = LOCAL + REMOTE
