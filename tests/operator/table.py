"""The op table: one list of rows from every family file."""

from table_batch_take import CASES as _BATCH_TAKE
from table_contrib import CASES as _CONTRIB
from table_contrib_nn import CASES as _CONTRIB_NN
from table_control_flow import CASES as _CONTROL_FLOW
from table_correlation import CASES as _CORRELATION
from table_custom import CASES as _CUSTOM
from table_deformable import CASES as _DEFORMABLE
from table_detection import CASES as _DETECTION
from table_element_0index import CASES as _ELEMENT_0INDEX
from table_elemwise import CASES as _ELEMWISE
from table_image import CASES as _IMAGE
from table_layer_norm import CASES as _LAYER_NORM
from table_layout import CASES as _LAYOUT
from table_linalg import CASES as _LINALG
from table_nn import CASES as _NN
from table_nn_layers import CASES as _NN_LAYERS
from table_numpy import CASES as _NUMPY
from table_optimizer import CASES as _OPTIMIZER
from table_pdf import CASES as _PDF
from table_quantization import CASES as _QUANTIZATION
from table_random_like import CASES as _RANDOM_LIKE
from table_sequence_contrib import CASES as _SEQ_CONTRIB
from table_shape import CASES as _SHAPE
from table_sparse import CASES as _SPARSE
from table_tensor import CASES as _TENSOR
from table_vision import CASES as _VISION

CASES = [*_ELEMWISE, *_SHAPE, *_LAYOUT, *_TENSOR, *_NN, *_NN_LAYERS, *_LINALG, *_LAYER_NORM, *_SEQ_CONTRIB, *_IMAGE,
         *_OPTIMIZER, *_CUSTOM, *_BATCH_TAKE, *_ELEMENT_0INDEX, *_RANDOM_LIKE, *_PDF, *_CORRELATION, *_CONTRIB,
         *_CONTRIB_NN, *_CONTROL_FLOW, *_DETECTION, *_VISION, *_DEFORMABLE, *_NUMPY, *_SPARSE, *_QUANTIZATION]
