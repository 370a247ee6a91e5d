from release.cli.program import main

main()
