import sys

from advisor.cli import main

sys.exit(main())
