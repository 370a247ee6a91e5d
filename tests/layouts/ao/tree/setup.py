def read_version(file_path="version.txt"):
    return open(file_path).read().strip()

version = read_version()
setup(name="torchao", version=version)
