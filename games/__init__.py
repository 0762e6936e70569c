"""One module (or package) per game: rule options, notation, move generation, claims.

The engine in ``solver`` never looks inside a game; a game never knows how it is solved.
"""
