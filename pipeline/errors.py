"""The one exception type the pipeline raises for bad input (CLI prints it as one line)."""


class PipelineError(Exception):
    """A user-facing error: one line naming the file, the row and the field at fault."""
