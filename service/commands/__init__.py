"""Sub-commands of ``dgt-service``."""
