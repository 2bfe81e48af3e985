import sys

from advisor.cli.main import main

sys.exit(main())
