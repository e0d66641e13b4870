/* The node walk of `PartialSearch.run` (scheduler/framework/node_search.py) and the heap's root
 * (`heap_choice`, node_heap.py) in C.
 *
 * One call walks the nodes from `start` in scan order, resuming at step `i`, over the cluster
 * state's flat int64 arrays (whole free GPUs, free CPU, free memory and milli-GPUs held:
 * `state/flat_counts.py`; GPUs and whether CPU and memory are modelled:
 * `state/node_arrays.py`), read through the buffer protocol once per call: no int object per
 * node; nothing is copied or kept between calls. It visits only the nodes of the GPU models
 * the request accepts (`accepted`: their indices in ascending order, built once per set of
 * models, `NodeArrays.accepted_nodes`; None: every node), from the first at or after `start`
 * round to the last before it; every node of another model in between is counted as a
 * mismatch (the nodes walked past: their steps less the accepted nodes among them), so the
 * mismatches, the steps processed and where the walk stops are those of a walk that visits
 * every node and counts each mismatch. A node that surely fits
 * (whole free GPUs, CPU and memory free, as the Python walk decides) is scored with the
 * inline LeastAllocated / MostAllocated arithmetic of the Python walk, in the same IEEE
 * double operations in the same order, and appended to `feasible` as (score, node). The call
 * hands the walk back to Python at the first node that needs the filter plugins (not surely
 * fitting, excluded by the pod's selector, or a value the double arithmetic would not hold
 * exactly), and at the stop (one feasible node more than wanted, or every node seen).
 *
 * With `plain_filters` (the filters are plain GpuFit and NodeResourcesFit, no DRA, no
 * nominations) the kernel decides every node as they would: a node short of CPU or memory,
 * or of whole GPUs for a request of whole GPUs, or (a fraction) without a whole free GPU or a
 * shared device with the fraction free, fails without a call. It also names the status the
 * first failing filter (in the profile's order: `gpu_first`) gives, as one of four kinds
 * (FAILED_GPU_SHORT: GPUs short now; FAILED_GPU_NEVER: the request exceeds the node's GPUs,
 * unresolvable; FAILED_CPU; FAILED_MEMORY, NodeResourcesFit checking CPU first), counts the
 * kinds and appends the unresolvable nodes to `unresolvable`: the diagnosis of a search that
 * finds nothing is those counts, with no call per failed node. A fraction that fits a shared
 * device is feasible and scored as any other.
 *
 * `heap_root` is `node_heap.heap_choice`'s rule in one pass over the (score, node) list: the
 * best score, and among equal scores the least pre-order rank in the heap's tree, computed
 * only for tied entries (no key tuples, no list of best positions). With `root` (a list
 * [found, top score, position, node]) the walk applies the same rule as it finds each feasible
 * node instead of appending a (score, node) pair: no tuple or float per node, for the callers
 * that need only the root (`PartialSearch.run_root`).
 *
 * Built by setuptools (tools/compile_scheduler.py, setup.py) with -ffp-contract=off: a fused
 * multiply-add would round once where Python rounds twice.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <limits.h>
#include <string.h>

/* Integers up to 2**53 convert to double exactly: CPython's int / int then rounds the
 * quotient of the two doubles once, as C does. Beyond, Python scores the node. */
#define EXACT_IN_DOUBLE (1LL << 53)
#define MILLI 1000LL
/* flat_counts.BEYOND_INT64: a count the array does not hold (Python reads the list's int). */
#define BEYOND_INT64 LLONG_MIN

enum { FRACTION_UNDECIDED = 3 };

/* The statuses a plain filter fails a node with (gpu_fit.py's `inline_statuses`, in this order). */
enum { FAILED_GPU_SHORT = 0, FAILED_GPU_NEVER = 1, FAILED_CPU = 2, FAILED_MEMORY = 3, FAILED_KINDS = 4 };

/* The slices of `milli` the shared devices of `devices` (a dict of free milli-GPUs) hold, each
 * device its free share over `milli`, counted into `slices` until `enough`: 0;
 * FRACTION_UNDECIDED when a value does not fit 64 bits (Python decides); -1 with an exception set. */
static int shared_slices(PyObject *devices, long long milli, long long enough, long long *slices) {
    *slices = 0;
    if (!PyDict_Check(devices)) {
        PyErr_SetString(PyExc_TypeError, "shared_free must hold one dict per node");
        return -1;
    }
    Py_ssize_t position = 0;
    PyObject *device, *free;
    while (PyDict_Next(devices, &position, &device, &free)) {
        int overflow = 0;
        long long value = PyLong_AsLongLongAndOverflow(free, &overflow);
        if (overflow) {
            return FRACTION_UNDECIDED;
        }
        if (value == -1 && PyErr_Occurred()) {
            return -1;
        }
        if (value >= milli) {
            *slices += value / milli;
            if (*slices >= enough) {
                return 0;
            }
        }
    }
    return 0;
}

/* Whether a shared device of `devices` has `milli` free: 1 or 0; FRACTION_UNDECIDED or -1 as
 * `shared_slices`. */
static int fraction_fits(PyObject *devices, long long milli) {
    long long slices;
    int status = shared_slices(devices, milli, 1, &slices);
    return status ? status : slices > 0;
}

/* Whether `node` has fewer free milli-GPUs in all than a slice of `milli` (0 where a count is
 * beyond int64: the shared devices decide). Its whole free devices and its shared devices'
 * free shares add up to its free milli-GPUs (GPUs · 1000 − used), so then no shared device
 * has the slice free, and its dict of shared devices need not be read: on a full cluster most
 * nodes a fraction's walk meets are full. */
static int node_short_of_slice(const long long *gpus, const long long *used, Py_ssize_t node, long long milli) {
    long long node_gpus = gpus[node], node_used = used[node];
    if (node_gpus == BEYOND_INT64 || node_used == BEYOND_INT64 || node_gpus < 0 || node_gpus > LLONG_MAX / (2 * MILLI)
            || node_used < -(LLONG_MAX / 2) || node_used > LLONG_MAX / 2) {
        return 0;
    }
    return node_gpus * MILLI - node_used < milli;
}

static PyObject *handed_back(Py_ssize_t i, Py_ssize_t processed, Py_ssize_t mismatched, int at_node,
                             const Py_ssize_t *failed) {
    return Py_BuildValue("(nnnO(nnnn))", i, processed, mismatched, at_node ? Py_True : Py_False,
                         failed[FAILED_GPU_SHORT], failed[FAILED_GPU_NEVER], failed[FAILED_CPU],
                         failed[FAILED_MEMORY]);
}

#define READ_FLAT(array, node, into)                                \
    do {                                                            \
        (into) = (array)[(node)];                                   \
        if ((into) == BEYOND_INT64) goto python_decides;            \
    } while (0)

/* A flat int64 array of at least `count` values into `view` (released by the caller on 0);
 * -1 with TypeError set. */
static int flat_array(PyObject *object, Py_ssize_t count, Py_buffer *view) {
    if (PyObject_GetBuffer(object, view, PyBUF_FORMAT | PyBUF_C_CONTIGUOUS) < 0) {
        PyErr_Clear();
    } else if (view->itemsize == (Py_ssize_t)sizeof(long long) && view->format != NULL
               && strcmp(view->format, "q") == 0 && view->len / view->itemsize >= count) {
        return 0;
    } else {
        PyBuffer_Release(view);
    }
    PyErr_SetString(PyExc_TypeError,
                    "walk(): the per-node counts must be int64 arrays of one value per node");
    return -1;
}

/* `preorder_rank` (node_heap.py) of heap position `position` (0-based) in a heap of `depth`
 * levels: the path from the root left-aligned to `depth` bits, then the level (an ancestor,
 * a prefix, before its descendants). */
typedef struct {
    unsigned long long path;
    int level;
} PreorderRank;

static PreorderRank preorder_rank(Py_ssize_t position, int depth) {
    unsigned long long one_based = (unsigned long long)position + 1;
    int level = 64 - __builtin_clzll(one_based);
    PreorderRank rank = {one_based << (depth - level), level};
    return rank;
}

static int ranks_before(PreorderRank a, PreorderRank b) {
    return a.path < b.path || (a.path == b.path && a.level < b.level);
}

/* The root of the heap over the feasible nodes found so far, kept as the walk finds them
 * (`root` mode): `heap_root`'s rule online. Pre-order ranks compare alike at any depth that
 * holds both positions, so the final depth need not be known. */
typedef struct {
    Py_ssize_t found;  /* feasible nodes so far: the next one's position in scan order */
    double top;        /* the best score so far */
    Py_ssize_t best;   /* its position (first of the best in pre-order) */
    Py_ssize_t node;   /* its node */
} RunningRoot;

#define ROOT_DEPTH 64
#define ROOT_ERROR "walk(): root must be None or a list [found, top score, position, node]"

/* The root list [found, top, position, node] (node_search.RunningRoot's layout) into `root`;
 * -1 with TypeError set. */
static int load_root(PyObject *list, RunningRoot *root) {
    if (!PyList_Check(list) || PyList_GET_SIZE(list) != 4) {
        PyErr_SetString(PyExc_TypeError, ROOT_ERROR);
        return -1;
    }
    root->found = PyLong_AsSsize_t(PyList_GET_ITEM(list, 0));
    root->top = 0.0;
    root->best = root->node = -1;
    if (root->found > 0) {
        PyObject *top = PyList_GET_ITEM(list, 1);
        if (!PyFloat_CheckExact(top)) {
            PyErr_SetString(PyExc_TypeError, ROOT_ERROR);
            return -1;
        }
        root->top = PyFloat_AS_DOUBLE(top);
        root->best = PyLong_AsSsize_t(PyList_GET_ITEM(list, 2));
        root->node = PyLong_AsSsize_t(PyList_GET_ITEM(list, 3));
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* `root` back into the list; -1 with an exception set. */
static int store_root(PyObject *list, const RunningRoot *root) {
    PyObject *values[4] = {PyLong_FromSsize_t(root->found), PyFloat_FromDouble(root->top),
                           PyLong_FromSsize_t(root->best), PyLong_FromSsize_t(root->node)};
    int failed = 0;
    for (int k = 0; k < 4; k++) {
        if (values[k] == NULL) {
            failed = 1;
        }
    }
    for (int k = 0; k < 4; k++) {
        if (failed) {
            Py_XDECREF(values[k]);
        } else {
            PyList_SetItem(list, k, values[k]);  /* steals the reference */
        }
    }
    return failed ? -1 : 0;
}

/* A feasible node of `score` found at the next position: the root's rule (best score, then
 * least pre-order rank; -0.0 == 0.0). */
static void fold_root(RunningRoot *root, double score, Py_ssize_t node) {
    Py_ssize_t position = root->found++;
    if (position == 0 || score > root->top) {
        root->top = score;
        root->best = position;
        root->node = node;
    } else if (score == root->top
               && ranks_before(preorder_rank(position, ROOT_DEPTH), preorder_rank(root->best, ROOT_DEPTH))) {
        root->best = position;
        root->node = node;
    }
}

PyDoc_STRVAR(walk_doc,
"walk(feasible, whole_free, cpu_free, memory_free, used, gpus, has_cpu, has_memory, accepted,\n"
"     excluded, start, count, i, processed, wanted, whole, cpu, memory, milli, least, weight,\n"
"     unresolvable, plain_filters, shared_free, root, gpu_first)\n"
"-> (i, processed, mismatched, at_node, (gpu_short, gpu_never, cpu_short, memory_short))\n\n"
"Walk from step i; at_node: Python resolves the node at step i (start + i, wrapped) and calls\n"
"again from i + 1; else the walk stopped at step i. accepted: an int64 array of the nodes of the\n"
"accepted GPU models in ascending order (the others are counted as mismatched, not visited), or\n"
"None: every node. root None: each feasible node is appended\n"
"to feasible as (score, node); else root is [found, top score, position, node], the heap's root\n"
"over the feasible nodes so far, updated in place and nothing appended. The counts are of the\n"
"nodes this call failed (plain_filters only), by the status of the first filter that fails them.");

/* The per-node int64 arrays, in walk()'s argument order (arguments 1 to 7). */
enum { FLAT_WHOLE_FREE, FLAT_CPU_FREE, FLAT_MEMORY_FREE, FLAT_USED, FLAT_GPUS, FLAT_HAS_CPU, FLAT_HAS_MEMORY,
       FLAT_ARRAYS };
#define WALK_ARGS 26

/* The accepted nodes: an int64 array of node indices, or NULL (every node, `size` = count). */
typedef struct {
    const long long *nodes;
    Py_ssize_t size;
} Accepted;

/* What a call reads through the buffer protocol: `taken` flat arrays of one int64 per node and
 * the accepted nodes (`listed`, when given), released together by `release_views`. */
typedef struct {
    Py_buffer views[FLAT_ARRAYS];
    const long long *arrays[FLAT_ARRAYS];
    int taken;
    Py_buffer listed;
    int listed_taken;
    Accepted accepted;
} Views;

/* `n` (at most FLAT_ARRAYS) flat arrays of at least `count` values from `arrays`, and
 * `accepted` (None, or an int64 array of at most `count` node indices) into `views`; -1 with an
 * exception set (what was taken stays in `views` for `release_views`). */
static int take_views(PyObject *const *arrays, int n, PyObject *accepted, Py_ssize_t count, Views *views) {
    views->taken = 0;
    views->listed_taken = 0;
    views->accepted.nodes = NULL;
    views->accepted.size = 0;
    for (; views->taken < n; views->taken++) {
        if (flat_array(arrays[views->taken], count, &views->views[views->taken]) < 0) {
            return -1;
        }
        views->arrays[views->taken] = (const long long *)views->views[views->taken].buf;
    }
    if (accepted != Py_None) {
        if (flat_array(accepted, 0, &views->listed) < 0) {
            return -1;
        }
        views->listed_taken = 1;
        views->accepted.nodes = (const long long *)views->listed.buf;
        views->accepted.size = views->listed.len / views->listed.itemsize;
        if (views->accepted.size > count) {
            PyErr_SetString(PyExc_ValueError, "accepted lists more nodes than the cluster holds");
            return -1;
        }
    }
    return 0;
}

static void release_views(Views *views) {
    if (views->listed_taken) {
        PyBuffer_Release(&views->listed);
    }
    while (views->taken > 0) {
        PyBuffer_Release(&views->views[--views->taken]);
    }
}

/* The first position of `accepted` holding a node at or after `node` (a binary search over
 * the ascending indices; `node` itself where every node is accepted). */
static Py_ssize_t first_at_or_after(Accepted accepted, Py_ssize_t node) {
    if (accepted.nodes == NULL) {
        return node;
    }
    Py_ssize_t low = 0, high = accepted.size;
    while (low < high) {
        Py_ssize_t middle = low + (high - low) / 2;
        if (accepted.nodes[middle] < node) {
            low = middle + 1;
        } else {
            high = middle;
        }
    }
    return low;
}

static PyObject *walk_nodes(PyObject *const *args, const long long *const *arrays, Accepted accepted) {
    const long long *whole_free = arrays[FLAT_WHOLE_FREE], *cpu_free = arrays[FLAT_CPU_FREE];
    const long long *memory_free = arrays[FLAT_MEMORY_FREE], *used = arrays[FLAT_USED];
    const long long *gpus = arrays[FLAT_GPUS], *has_cpu = arrays[FLAT_HAS_CPU];
    const long long *has_memory = arrays[FLAT_HAS_MEMORY];
    PyObject *feasible = args[0], *excluded = args[9];
    Py_ssize_t start = PyLong_AsSsize_t(args[10]), count = PyLong_AsSsize_t(args[11]);
    Py_ssize_t i = PyLong_AsSsize_t(args[12]), processed = PyLong_AsSsize_t(args[13]);
    Py_ssize_t wanted = PyLong_AsSsize_t(args[14]);
    /* The request: a value beyond 64 bits (or the double range) makes Python decide every node. */
    long long request[4];
    int request_too_big = 0;
    for (int k = 0; k < 4; k++) {
        int overflow = 0;
        request[k] = PyLong_AsLongLongAndOverflow(args[15 + k], &overflow);
        if (overflow || request[k] < -EXACT_IN_DOUBLE || request[k] > EXACT_IN_DOUBLE) {
            request_too_big = 1;
        }
    }
    long long whole = request[0], cpu = request[1], memory = request[2], milli = request[3];
    int least = PyObject_IsTrue(args[19]);
    double weight = PyFloat_AsDouble(args[20]);
    PyObject *unresolvable = args[21];  /* the nodes failed FAILED_GPU_NEVER, appended */
    int plain_filters = PyObject_IsTrue(args[22]);
    PyObject *shared_free = args[23];  /* per node: {device: free milli-GPUs} of shared devices */
    PyObject *root_list = args[24];  /* None: append (score, node) to feasible; else the running root */
    int gpu_first = PyObject_IsTrue(args[25]);  /* GpuFit runs before NodeResourcesFit */
    Py_ssize_t failed[FAILED_KINDS] = {0, 0, 0, 0};
    if (PyErr_Occurred()) {
        return NULL;
    }
    RunningRoot root = {0, 0.0, -1, -1};
    int root_mode = root_list != Py_None;
    if (root_mode && load_root(root_list, &root) < 0) {
        return NULL;
    }
    PyObject *lists[] = {feasible, unresolvable, shared_free};
    for (size_t k = 0; k < sizeof(lists) / sizeof(lists[0]); k++) {
        if (!PyList_Check(lists[k]) || (k > 1 && PyList_GET_SIZE(lists[k]) < count)) {
            PyErr_SetString(PyExc_TypeError, "walk(): the node arrays must be lists of one int per node");
            return NULL;
        }
    }
    int any_excluded = excluded != Py_None;  /* None: no node excluded; else a container of nodes */
    if (start < 0 || count < 0 || i < 0 || i > count || start >= (count ? count : 1)) {
        PyErr_SetString(PyExc_ValueError, "walk(): start, count or i out of range");
        return NULL;
    }
    if (accepted.nodes == NULL) {
        accepted.size = count;
    }
    /* Scan order over the accepted nodes: from position `first` (the first at or after
     * `start`) round the array. `position`: how many of them lie before step i. */
    Py_ssize_t first = first_at_or_after(accepted, start);
    Py_ssize_t position = start + i < count ? first_at_or_after(accepted, start + i) - first
                                            : accepted.size - first + first_at_or_after(accepted, start + i - count);
    /* Every step from `i_in` to where the walk ends is processed, so `processed` and the
     * mismatches (the steps not of an accepted node) follow from the steps and positions. */
    const Py_ssize_t i_in = i, position_in = position;
    for (; position < accepted.size; position++) {
        Py_ssize_t slot = first + position;
        if (slot >= accepted.size) {
            slot -= accepted.size;
        }
        Py_ssize_t node = accepted.nodes == NULL ? slot : (Py_ssize_t)accepted.nodes[slot];
        Py_ssize_t step = node < 0 || node >= count ? -1 : node >= start ? node - start : node - start + count;
        if (step < i || (step == i && position > position_in)) {
            PyErr_SetString(PyExc_ValueError, "walk(): accepted must list nodes of the cluster in ascending order");
            return NULL;
        }
        i = step;
        long long value;
        if (any_excluded) {
            PyObject *key = PyLong_FromSsize_t(node);
            if (key == NULL) {
                return NULL;
            }
            int found = PySequence_Contains(excluded, key);
            Py_DECREF(key);
            if (found < 0) {
                return NULL;
            }
            if (found) {
                goto python_decides;
            }
        }
        if (request_too_big) {
            goto python_decides;
        }
        /* Surely fitting: whole free GPUs enough, and CPU and memory free where modelled. */
        READ_FLAT(whole_free, node, value);
        int gpus_short = value < whole;
        int cpu_short = 0, memory_short = 0;
        READ_FLAT(has_cpu, node, value);
        if (value) {
            READ_FLAT(cpu_free, node, value);
            cpu_short = value < cpu;
        }
        READ_FLAT(has_memory, node, value);
        if (value) {
            READ_FLAT(memory_free, node, value);
            memory_short = value < memory;
        }
        if (gpus_short && plain_filters && !cpu_short && !memory_short && milli > 0 && milli < MILLI
                && !node_short_of_slice(gpus, used, node, milli)) {
            /* GpuFit on a fraction without a whole free GPU: a shared device with it free. */
            int shared_status = fraction_fits(PyList_GET_ITEM(shared_free, node), milli);
            if (shared_status < 0) {
                return NULL;
            }
            if (shared_status == FRACTION_UNDECIDED) {
                goto python_decides;
            }
            gpus_short = !shared_status;
        }
        if (gpus_short || cpu_short || memory_short) {
            /* NodeResourcesFit fails a node short of CPU or memory, GpuFit one short of GPUs. */
            if (!plain_filters) {
                goto python_decides;
            }
            int kind;
            if (gpus_short && (gpu_first || (!cpu_short && !memory_short))) {
                long long node_gpus;
                READ_FLAT(gpus, node, node_gpus);
                /* GpuFit: unresolvable when the request exceeds every GPU of the node. */
                kind = node_gpus < LLONG_MAX / MILLI && milli > node_gpus * MILLI ? FAILED_GPU_NEVER : FAILED_GPU_SHORT;
            } else {
                kind = cpu_short ? FAILED_CPU : FAILED_MEMORY;  /* NodeResourcesFit: CPU first */
            }
            if (kind == FAILED_GPU_NEVER) {
                PyObject *boxed = PyLong_FromSsize_t(node);
                if (boxed == NULL) {
                    return NULL;
                }
                int appended = PyList_Append(unresolvable, boxed);
                Py_DECREF(boxed);
                if (appended < 0) {
                    return NULL;
                }
            }
            failed[kind]++;
            continue;
        }
        if ((root_mode ? root.found : PyList_GET_SIZE(feasible)) == wanted) {
            break;  /* one feasible node more than wanted: the search is cancelled */
        }
        long long node_gpus, node_used;
        READ_FLAT(gpus, node, node_gpus);
        READ_FLAT(used, node, node_used);
        long long numerator = node_used + milli;
        if (node_gpus <= 0 || node_gpus > EXACT_IN_DOUBLE / MILLI || numerator < -EXACT_IN_DOUBLE
                || numerator > EXACT_IN_DOUBLE) {
            goto python_decides;  /* no GPUs (the plugin scores), or beyond exact doubles */
        }
        /* node_search.py: fraction = (used[node] + milli) / (spec.gpus * MILLI), then
         * weight * (100.0 * (1.0 - fraction)) or weight * (100.0 * fraction). */
        double fraction = (double)numerator / (double)(node_gpus * MILLI);
        double score = weight * (least ? 100.0 * (1.0 - fraction) : 100.0 * fraction);
        if (root_mode) {  /* finite: root mode is asked only with a finite weight */
            fold_root(&root, score, node);
            continue;
        }
        PyObject *pair = PyTuple_New(2);
        if (pair == NULL) {
            return NULL;
        }
        PyObject *boxed_score = PyFloat_FromDouble(score), *boxed_node = PyLong_FromSsize_t(node);
        if (boxed_score == NULL || boxed_node == NULL) {
            Py_XDECREF(boxed_score);
            Py_XDECREF(boxed_node);
            Py_DECREF(pair);
            return NULL;
        }
        PyTuple_SET_ITEM(pair, 0, boxed_score);
        PyTuple_SET_ITEM(pair, 1, boxed_node);
        int appended = PyList_Append(feasible, pair);
        Py_DECREF(pair);
        if (appended < 0) {
            return NULL;
        }
        continue;
    python_decides:
        if (root_mode && store_root(root_list, &root) < 0) {
            return NULL;
        }
        return handed_back(i, processed + (i - i_in), (i - i_in) - (position - position_in), 1, failed);
    }
    if (position == accepted.size) {
        i = count;  /* every accepted node seen: the steps after the last are of other models */
    }
    if (root_mode && store_root(root_list, &root) < 0) {
        return NULL;
    }
    return handed_back(i, processed + (i - i_in), (i - i_in) - (position - position_in), 0, failed);
}

static PyObject *walk(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != WALK_ARGS) {
        PyErr_Format(PyExc_TypeError, "walk() takes %d arguments (%zd given)", WALK_ARGS, nargs);
        return NULL;
    }
    Py_ssize_t count = PyLong_AsSsize_t(args[11]);
    if (count == -1 && PyErr_Occurred()) {
        return NULL;
    }
    Views views;
    PyObject *result = NULL;
    if (take_views(args + 1, FLAT_ARRAYS, args[8], count, &views) == 0) {
        result = walk_nodes(args, views.arrays, views.accepted);
    }
    release_views(&views);
    return result;
}

PyDoc_STRVAR(heap_root_doc,
"heap_root(scored) -> node | None\n\n"
"The node `heap_choice` (node_heap.py) returns for a non-empty list of (score, node) in scan\n"
"order: of the best score, the entry first in the pre-order of the heap's tree. None where a\n"
"score is not a float or is NaN (Python decides).");

static PyObject *heap_root(PyObject *module, PyObject *scored) {
    (void)module;
    if (!PyList_Check(scored) || PyList_GET_SIZE(scored) == 0) {
        PyErr_SetString(PyExc_TypeError, "heap_root(): scored must be a non-empty list of (score, node)");
        return NULL;
    }
    Py_ssize_t size = PyList_GET_SIZE(scored);
    int depth = 64 - __builtin_clzll((unsigned long long)size);  /* len(scored).bit_length() */
    Py_ssize_t best = -1;
    double top = 0.0;
    PreorderRank best_rank = {0, 0};  /* level 0: not computed yet (only a tie needs it) */
    for (Py_ssize_t position = 0; position < size; position++) {
        PyObject *entry = PyList_GET_ITEM(scored, position);
        if (!PyTuple_Check(entry) || PyTuple_GET_SIZE(entry) != 2) {
            PyErr_SetString(PyExc_TypeError, "heap_root(): scored must be a non-empty list of (score, node)");
            return NULL;
        }
        PyObject *boxed = PyTuple_GET_ITEM(entry, 0);
        if (!PyFloat_CheckExact(boxed)) {
            Py_RETURN_NONE;  /* an int (or other) score: Python compares it exactly */
        }
        double score = PyFloat_AS_DOUBLE(boxed);
        if (score != score) {
            Py_RETURN_NONE;  /* NaN: max() and == have no order to follow */
        }
        if (best < 0 || score > top) {
            best = position;
            top = score;
            best_rank.level = 0;
        } else if (score == top) {  /* -0.0 == 0.0, as in Python */
            if (best_rank.level == 0) {
                best_rank = preorder_rank(best, depth);
            }
            PreorderRank rank = preorder_rank(position, depth);
            if (ranks_before(rank, best_rank)) {
                best = position;
                best_rank = rank;
            }
        }
    }
    PyObject *node = PyTuple_GET_ITEM(PyList_GET_ITEM(scored, best), 1);
    Py_INCREF(node);
    return node;
}

PyDoc_STRVAR(gpus_run_out_first_doc,
"gpus_run_out_first(whole_free, cpu_free, memory_free, has_cpu, has_memory, accepted, count, milli, cpu, memory,"
" shared_free) -> bool\n\n"
"`pod_room.gpus_run_out_first` (scheduler/framework/pod_room.py) over the flat arrays: whether\n"
"every node of `accepted` (None: each of `count`) whose GPUs hold pods of `milli` milli-GPUs\n"
"(whole GPUs: a multiple of 1000; a fraction: below 1000, also on the shared devices of\n"
"`shared_free`) has CPU and memory for as many pods of `cpu` milli-CPU and `memory` MiB.\n"
"False also where a count is beyond int64 (Python's plan decides).");

/* `gpus_run_out_first`'s pass: 1 or 0; -1 with an exception set. `milli` is whole GPUs (a
 * multiple of 1000) or a fraction below 1000, whose pods also go on the shared devices of
 * `shared` (a list of one dict per node). */
static int run_out_first(const Views *views, Py_ssize_t count, long long milli, long long cpu, long long memory,
                         PyObject *shared) {
    const long long *const *arrays = views->arrays, *nodes = views->accepted.nodes;
    Py_ssize_t size = nodes ? views->accepted.size : count;
    for (Py_ssize_t k = 0; k < size; k++) {
        Py_ssize_t node = nodes ? (Py_ssize_t)nodes[k] : k;
        if (node < 0 || node >= count) {
            PyErr_SetString(PyExc_ValueError, "gpus_run_out_first(): a node index out of range");
            return -1;
        }
        long long free_gpus = arrays[0][node], pods;
        if (free_gpus == BEYOND_INT64 || free_gpus > EXACT_IN_DOUBLE) {
            return 0;  /* Python decides */
        }
        if (milli < MILLI) {
            long long on_shared;
            int status = shared_slices(PyList_GET_ITEM(shared, node), milli, LLONG_MAX, &on_shared);
            if (status) {
                return status < 0 ? -1 : 0;  /* an error, or Python decides */
            }
            pods = free_gpus * (MILLI / milli) + on_shared;
        } else {
            pods = free_gpus / (milli / MILLI);
        }
        if (pods <= 0) {
            continue;
        }
        if (cpu > 0 && arrays[3][node]) {
            long long free_cpu = arrays[1][node];
            if (free_cpu == BEYOND_INT64 || free_cpu / cpu < pods) {
                return 0;
            }
        }
        if (memory > 0 && arrays[4][node]) {
            long long free_memory = arrays[2][node];
            if (free_memory == BEYOND_INT64 || free_memory / memory < pods) {
                return 0;
            }
        }
    }
    return 1;
}

static PyObject *gpus_run_out_first(PyObject *module, PyObject *const *args, Py_ssize_t nargs) {
    (void)module;
    if (nargs != 11) {
        PyErr_Format(PyExc_TypeError, "gpus_run_out_first() takes 11 arguments (%zd given)", nargs);
        return NULL;
    }
    Py_ssize_t count = PyLong_AsSsize_t(args[6]);
    long long milli = PyLong_AsLongLong(args[7]), cpu = PyLong_AsLongLong(args[8]),
              memory = PyLong_AsLongLong(args[9]);
    if (PyErr_Occurred()) {
        return NULL;
    }
    PyObject *shared = args[10];
    int fraction = milli < MILLI;
    if (milli <= 0 || (!fraction && milli % MILLI) || (fraction && !PyList_Check(shared))) {
        PyErr_SetString(PyExc_ValueError,
                        "gpus_run_out_first(): milli must be whole GPUs, or a fraction with shared_free a list");
        return NULL;
    }
    if (fraction && PyList_GET_SIZE(shared) < count) {
        PyErr_SetString(PyExc_ValueError, "gpus_run_out_first(): shared_free must hold one dict per node");
        return NULL;
    }
    Views views;
    PyObject *result = NULL;
    if (take_views(args, 5, args[5], count, &views) == 0) {
        int answer = run_out_first(&views, count, milli, cpu, memory, shared);
        if (answer >= 0) {
            result = PyBool_FromLong(answer);
        }
    }
    release_views(&views);
    return result;
}

static PyMethodDef methods[] = {
    {"walk", (PyCFunction)(void (*)(void))walk, METH_FASTCALL, walk_doc},
    {"heap_root", (PyCFunction)heap_root, METH_O, heap_root_doc},
    {"gpus_run_out_first", (PyCFunction)(void (*)(void))gpus_run_out_first, METH_FASTCALL, gpus_run_out_first_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "native_walk",
    "The node walk of PartialSearch.run and the heap's root in C (scheduler/framework/native_walk.c).", -1,
    methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_native_walk(void) {
    return PyModule_Create(&module_def);
}
