"""``python -m pdi`` runs the ``pdi`` command."""

from pdi.cli import main

if __name__ == "__main__":
    main()
