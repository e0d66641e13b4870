/* Arrow buffers from a list of Python values: the event log's column conversion in C.
 *
 * Why: pyarrow's `pa.array(list)` asks its pandas shim whether the list is a pandas object,
 * and the shim imports pandas to answer (a fifth of a CPU second in a replay that never
 * touches pandas), then converts value by value through generic dispatch. The replay's
 * columns hold five kinds of value: int64, int32, float64, bool and UTF-8 strings, each
 * possibly None. These functions lay out Arrow's buffers for them (validity bitmap, values or
 * offsets and data) as bytes objects; `scheduler/eventlog/columns.py` wraps them with
 * `pa.Array.from_buffers`, which never consults the shim.
 *
 * Each function returns None when a value is not the plain kind it expects (a bool, a
 * subclass, an int beyond the column's range, an int a double cannot hold exactly, a string
 * that is not valid UTF-8): the caller then converts the column with `pa.array`, which
 * accepts or rejects it as it always has. So the arrays are `pa.array`'s, value for value.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

#define EXACT_DOUBLE_INT (1LL << 53) /* ints a double holds exactly, either sign */

/* (validity or None, values..., null count): the validity bitmap only when a value is null,
 * as pyarrow leaves it out of a column without nulls. */
static PyObject *
validity_or_none(PyObject *validity, Py_ssize_t nulls)
{
    if (nulls) {
        return validity;
    }
    Py_DECREF(validity);
    Py_RETURN_NONE;
}

static PyObject *
new_bitmap(Py_ssize_t n)
{
    PyObject *bitmap = PyBytes_FromStringAndSize(NULL, (n + 7) / 8);
    if (bitmap != NULL) {
        memset(PyBytes_AS_STRING(bitmap), 0, (size_t)((n + 7) / 8));
    }
    return bitmap;
}

static PyObject *
int_column(PyObject *self, PyObject *args)
{
    PyObject *values;
    int bits;
    if (!PyArg_ParseTuple(args, "O!i", &PyList_Type, &values, &bits)) {
        return NULL;
    }
    if (bits != 32 && bits != 64) {
        PyErr_SetString(PyExc_ValueError, "bits must be 32 or 64");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    Py_ssize_t width = bits / 8;
    PyObject *data = PyBytes_FromStringAndSize(NULL, n * width);
    PyObject *validity = new_bitmap(n);
    if (data == NULL || validity == NULL) {
        Py_XDECREF(data);
        Py_XDECREF(validity);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(data);
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        long long value = 0;
        if (item == Py_None) {
            nulls++;
        } else {
            int overflow = 0;
            if (!PyLong_CheckExact(item)) {
                goto other_kind;
            }
            value = PyLong_AsLongLongAndOverflow(item, &overflow);
            if (overflow || (bits == 32 && (value < INT32_MIN || value > INT32_MAX))) {
                goto other_kind;
            }
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        if (bits == 32) {
            int32_t narrow = (int32_t)value;
            memcpy(out + 4 * i, &narrow, 4);
        } else {
            int64_t wide = (int64_t)value;
            memcpy(out + 8 * i, &wide, 8);
        }
    }
    return Py_BuildValue("(NNn)", validity_or_none(validity, nulls), data, nulls);
other_kind:
    Py_DECREF(data);
    Py_DECREF(validity);
    Py_RETURN_NONE;
}

static PyObject *
float_column(PyObject *self, PyObject *args)
{
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *data = PyBytes_FromStringAndSize(NULL, n * 8);
    PyObject *validity = new_bitmap(n);
    if (data == NULL || validity == NULL) {
        Py_XDECREF(data);
        Py_XDECREF(validity);
        return NULL;
    }
    char *out = PyBytes_AS_STRING(data);
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        double value = 0.0;
        if (item == Py_None) {
            nulls++;
        } else {
            if (PyFloat_CheckExact(item)) {
                value = PyFloat_AS_DOUBLE(item);
            } else if (PyLong_CheckExact(item)) {
                int overflow = 0;
                long long whole = PyLong_AsLongLongAndOverflow(item, &overflow);
                if (overflow || whole > EXACT_DOUBLE_INT || whole < -EXACT_DOUBLE_INT) {
                    goto other_kind;
                }
                value = (double)whole;
            } else {
                goto other_kind;
            }
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        memcpy(out + 8 * i, &value, 8);
    }
    return Py_BuildValue("(NNn)", validity_or_none(validity, nulls), data, nulls);
other_kind:
    Py_DECREF(data);
    Py_DECREF(validity);
    Py_RETURN_NONE;
}

static PyObject *
bool_column(PyObject *self, PyObject *args)
{
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    PyObject *data = new_bitmap(n); /* Arrow packs booleans as bits, like validity */
    PyObject *validity = new_bitmap(n);
    if (data == NULL || validity == NULL) {
        Py_XDECREF(data);
        Py_XDECREF(validity);
        return NULL;
    }
    uint8_t *out = (uint8_t *)PyBytes_AS_STRING(data);
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) {
            nulls++;
            continue;
        }
        if (item == Py_True) {
            out[i >> 3] |= (uint8_t)(1u << (i & 7));
        } else if (item != Py_False) {
            Py_DECREF(data);
            Py_DECREF(validity);
            Py_RETURN_NONE;
        }
        valid[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    return Py_BuildValue("(NNn)", validity_or_none(validity, nulls), data, nulls);
}

static PyObject *
string_column(PyObject *self, PyObject *args)
{
    PyObject *values;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &values)) {
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    /* First pass: the kinds and the bytes of UTF-8 in all (Arrow's string offsets are int32). */
    Py_ssize_t total = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) {
            continue;
        }
        if (!PyUnicode_CheckExact(item)) {
            Py_RETURN_NONE;
        }
        Py_ssize_t size;
        if (PyUnicode_AsUTF8AndSize(item, &size) == NULL) { /* e.g. a lone surrogate */
            PyErr_Clear();
            Py_RETURN_NONE;
        }
        total += size;
        if (total > INT32_MAX) {
            Py_RETURN_NONE;
        }
    }
    PyObject *offsets = PyBytes_FromStringAndSize(NULL, (n + 1) * 4);
    PyObject *data = PyBytes_FromStringAndSize(NULL, total);
    PyObject *validity = new_bitmap(n);
    if (offsets == NULL || data == NULL || validity == NULL) {
        Py_XDECREF(offsets);
        Py_XDECREF(data);
        Py_XDECREF(validity);
        return NULL;
    }
    char *offset_out = PyBytes_AS_STRING(offsets);
    char *out = PyBytes_AS_STRING(data);
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    int32_t at = 0;
    memcpy(offset_out, &at, 4);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) {
            nulls++;
        } else {
            Py_ssize_t size;
            const char *utf8 = PyUnicode_AsUTF8AndSize(item, &size); /* cached by the first pass */
            memcpy(out + at, utf8, (size_t)size);
            at += (int32_t)size;
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
        memcpy(offset_out + 4 * (i + 1), &at, 4);
    }
    return Py_BuildValue("(NNNn)", validity_or_none(validity, nulls), offsets, data, nulls);
}

static PyMethodDef methods[] = {
    {"int_column", int_column, METH_VARARGS,
     "int_column(values, bits) -> (validity | None, values, null count), or None for another kind"},
    {"float_column", float_column, METH_VARARGS,
     "float_column(values) -> (validity | None, values, null count), or None for another kind"},
    {"bool_column", bool_column, METH_VARARGS,
     "bool_column(values) -> (validity | None, bits, null count), or None for another kind"},
    {"string_column", string_column, METH_VARARGS,
     "string_column(values) -> (validity | None, offsets, data, null count), or None for another kind"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "arrow_columns", "Arrow buffers from lists of Python values.", -1, methods,
};

PyMODINIT_FUNC
PyInit_arrow_columns(void)
{
    return PyModule_Create(&module);
}
