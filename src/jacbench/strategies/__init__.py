"""Strategies: ways to differentiate a problem, one module per framework, one registry."""
