"""python -m scorep: measure a Python program (see `python -m scorep --help`)."""

if __name__ == "__main__":
    from scorep.measure.cli import main

    main()
