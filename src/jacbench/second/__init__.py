"""Second order: Hessians of the moments problem and per-path second-order GBM Greeks.

One record per method in ``registry.py`` (framework, name, kind, description); one module per
framework. Every method returns numpy arrays and is tested against the closed forms.
"""
