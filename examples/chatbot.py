"""The example chatbot: durable memory in a terminal chat, on the embedded SQLite default.

    python examples/chatbot.py [--user ann] [--workspace acme] [--shared] [--thread main]
                               [--url URL] [--model openai:gpt-4o-mini]

The same as `memory-plugin chat`. Without --model or MEMORY_MODEL (for example
openai:gpt-4o-mini, with OPENAI_BASE_URL for any OpenAI-compatible server) it chats on the
built-in offline model. The whole chatbot is memory_plugin.offline.chat: create_memory_graph plus a
read-eval loop and a few slash commands.
"""

import sys

from memory_plugin.cli import main

if __name__ == "__main__":
    sys.exit(main(["chat", *sys.argv[1:]]))
