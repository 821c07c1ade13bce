"""Tests of the chapters' computations (report.legacy), one file per module."""
