# pytorch/data's setup.py reads version.txt
with open("version.txt") as f:
    version = f.readline().strip()
