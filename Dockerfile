# gpu-finops as a container image: the wheel (the scheduler compiled with mypyc) built in a
# first stage, installed within the lock's tested set in the second, run as a non-root user.
#   docker build --build-arg GPU_FINOPS_BUILD_COMMIT=$(git rev-parse HEAD) -t gpu-finops:0.1.0 .
# The Helm chart deploy/helm/gpu-finops runs it as CronJobs (docs/reports.md, "In the cluster").

FROM python:3.11-slim-bookworm AS wheel
# A C compiler for mypyc; without one the wheel is pure Python (setup.py says so).
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
# The image has no .git: the commit the wheel records is given.
ARG GPU_FINOPS_BUILD_COMMIT=""
ENV GPU_FINOPS_BUILD_COMMIT=${GPU_FINOPS_BUILD_COMMIT}
RUN pip wheel --no-cache-dir --no-deps -w /wheels . && cp constraints.txt /wheels/

FROM python:3.11-slim-bookworm
RUN groupadd --gid 10001 gpu-finops \
    && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin gpu-finops
COPY --from=wheel /wheels /wheels
RUN pip install --no-cache-dir -c /wheels/constraints.txt /wheels/gpu_finops-*.whl && rm -rf /wheels
USER 10001:10001
WORKDIR /data
ENTRYPOINT ["gpu-finops"]
CMD ["--help"]
