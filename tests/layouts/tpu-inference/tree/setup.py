def get_version():
    return "0.0.0"

setup(name="tpu_inference", version=get_version())
