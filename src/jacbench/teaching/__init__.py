"""Forward and reverse mode in a few lines each, for the book's chapter on the mechanics."""
