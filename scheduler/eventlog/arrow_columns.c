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

/* A column's values buffer (`width` bytes a value, or a bitmap when 0) and its validity
 * bitmap, all bits clear; -1 (an exception set) when memory runs out. */
static int
new_buffers(Py_ssize_t n, Py_ssize_t width, PyObject **data, PyObject **validity)
{
    *data = width ? PyBytes_FromStringAndSize(NULL, n * width) : new_bitmap(n);
    *validity = new_bitmap(n);
    if (*data == NULL || *validity == NULL) {
        Py_CLEAR(*data);
        Py_CLEAR(*validity);
        return -1;
    }
    return 0;
}

/* A value of another kind: the buffers dropped, None for the caller's `pa.array`. */
static PyObject *
another_kind(PyObject *data, PyObject *validity)
{
    Py_DECREF(data);
    Py_DECREF(validity);
    Py_RETURN_NONE;
}

/* Value `i` of a column into its buffer `data` as the column's format has it ('i' int32,
 * 'q' int64, 'd' float64, '?' bool: Arrow packs booleans as bits, like validity); -1 when it
 * is another kind. */
static int
put_value(PyObject *item, char format, char *data, Py_ssize_t i)
{
    int overflow = 0;
    if (format == '?') {
        if (item == Py_True) {
            data[i >> 3] |= (char)(1u << (i & 7));
        } else if (item != Py_False) {
            return -1;
        }
        return 0;
    }
    if (format == 'd') {
        double value;
        if (PyFloat_CheckExact(item)) {
            value = PyFloat_AS_DOUBLE(item);
        } else if (PyLong_CheckExact(item)) {
            long long whole = PyLong_AsLongLongAndOverflow(item, &overflow);
            if (overflow || whole > EXACT_DOUBLE_INT || whole < -EXACT_DOUBLE_INT) {
                return -1;
            }
            value = (double)whole;
        } else {
            return -1;
        }
        memcpy(data + 8 * i, &value, 8);
        return 0;
    }
    if (!PyLong_CheckExact(item)) {
        return -1;
    }
    long long value = PyLong_AsLongLongAndOverflow(item, &overflow);
    if (overflow) {
        return -1;
    }
    if (format == 'i') {
        if (value < INT32_MIN || value > INT32_MAX) {
            return -1;
        }
        int32_t narrow = (int32_t)value;
        memcpy(data + 4 * i, &narrow, 4);
    } else {
        int64_t wide = (int64_t)value;
        memcpy(data + 8 * i, &wide, 8);
    }
    return 0;
}

static PyObject *
value_column(PyObject *self, PyObject *args)
{
    PyObject *values;
    int format;
    if (!PyArg_ParseTuple(args, "O!C", &PyList_Type, &values, &format)) {
        return NULL;
    }
    if (format != 'i' && format != 'q' && format != 'd' && format != '?') {
        PyErr_SetString(PyExc_ValueError, "format must be 'i' (int32), 'q' (int64), 'd' (float64) or '?' (bool)");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(values);
    Py_ssize_t width = format == '?' ? 0 : format == 'i' ? 4 : 8; /* 0: a bitmap */
    PyObject *data, *validity;
    if (new_buffers(n, width, &data, &validity) < 0) {
        return NULL;
    }
    char *out = PyBytes_AS_STRING(data);
    uint8_t *valid = (uint8_t *)PyBytes_AS_STRING(validity);
    Py_ssize_t nulls = 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(values, i);
        if (item == Py_None) {
            nulls++;
            memset(out + width * i, 0, (size_t)width); /* pyarrow's zeros under a null */
        } else if (put_value(item, (char)format, out, i) < 0) {
            return another_kind(data, validity);
        } else {
            valid[i >> 3] |= (uint8_t)(1u << (i & 7));
        }
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
    {"value_column", value_column, METH_VARARGS,
     "value_column(values, format) -> (validity | None, values, null count), or None for another kind"},
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
