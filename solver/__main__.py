from gamesolver.solver.cli import main

main()
