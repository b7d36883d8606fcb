"""Exit 0 when two `encc embed --format=json` outputs hold the same embeddings, else 1."""
import json
import sys

a, b = (json.load(open(path))["embeddings"] for path in sys.argv[1:3])
sys.exit(0 if a == b else 1)
