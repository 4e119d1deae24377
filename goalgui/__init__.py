"""goalgui: watch and steer LLM goal agents."""

__version__ = "0.1.0"
