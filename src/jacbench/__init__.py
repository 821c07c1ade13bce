"""jacbench: how PyTorch, TensorFlow and JAX compute Jacobians, and what it costs."""

__version__ = "0.1.0"
