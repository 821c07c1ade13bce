"""The report: what a notebook imports to format results (tables, figures, the chapters' facts
and claims); it measures nothing and builds nothing (jacbench.measure, jacbench.publish)."""
