"""Components for managing tasks within the A2A server."""

from a2a.server.tasks.inmemory_push_notifier import InMemoryPushNotifier
from a2a.server.tasks.inmemory_task_store import InMemoryTaskStore
from a2a.server.tasks.push_notifier import PushNotifier
from a2a.server.tasks.result_aggregator import ResultAggregator
from a2a.server.tasks.task_manager import TaskManager
from a2a.server.tasks.task_store import TaskStore
from a2a.server.tasks.task_updater import TaskUpdater


__all__ = [
    'InMemoryPushNotifier',
    'InMemoryTaskStore',
    'PushNotifier',
    'ResultAggregator',
    'TaskManager',
    'TaskStore',
    'TaskUpdater',
]
