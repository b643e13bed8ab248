def shout(text):
    """The text in capitals, with an exclamation mark."""
    return text.upper() + "!"


def whisper(text):
    """The text in small letters, with an ellipsis."""
    return text.lower() + "..."
