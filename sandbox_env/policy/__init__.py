"""Scripted policies served over the chat-completions protocol, for vf-eval without a provider."""
