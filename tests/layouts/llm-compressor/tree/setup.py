setup(
    name="llmcompressor",
    use_scm_version={"version_scheme": version_func},
)
