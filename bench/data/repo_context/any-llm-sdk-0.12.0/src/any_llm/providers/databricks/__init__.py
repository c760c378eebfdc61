from .databricks import DatabricksProvider

__all__ = ["DatabricksProvider"]
