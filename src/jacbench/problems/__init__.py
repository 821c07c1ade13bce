"""Problems: what is differentiated, with closed-form derivatives to check against."""
