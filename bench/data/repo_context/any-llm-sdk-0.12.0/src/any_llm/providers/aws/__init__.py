from .aws import AwsProvider

__all__ = ["AwsProvider"]
