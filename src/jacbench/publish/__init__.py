"""Building the book and checking it: staging, executing the chapters, jupyter-book, the reference
dataset's coverage, the Sphinx extension, and the checks in a browser and on paper. The command
line is its only caller; a notebook imports ``jacbench.report``, never this."""
