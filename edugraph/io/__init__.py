"""Files in TF's formats (``tf.io``): TFRecord files written and read byte for byte as TF does,
and ``decode_raw``, which reads a record's bytes back as numbers."""
from .decode_raw import decode_raw
from .tfrecord import TFRecordWriter, tf_record_iterator

__all__ = ["TFRecordWriter", "decode_raw", "tf_record_iterator"]
