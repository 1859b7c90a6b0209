import argparse
from pathlib import Path


def main(argv=None):
    parser = argparse.ArgumentParser(description="count the words of a file")
    parser.add_argument("file")
    args = parser.parse_args(argv)
    text = Path(args.file).read_text()
    print(len(text.split()))


if __name__ == "__main__":
    main()
