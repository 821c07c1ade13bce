"""One module per chapter that computes something: the numbers, picks and verdicts its prose
states, each read from the rows by a function with fast tests (tests/chapters). A notebook cell
only lays out what these return: one table, one figure or one glued value."""
