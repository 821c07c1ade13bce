"""Tests of the chapters' computations (report.chapters), one file per module."""
