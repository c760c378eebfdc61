import logging

logger = logging.getLogger("openai.agents")
