"""Remedy titles and the planner's "cannot help" reasons are UI text: the
engine returns them in the active language (a request's, set by the view)."""

from django.utils import translation

from engine.remedies import openstack, topology


def test_titles_and_reasons_follow_the_active_language():
    with translation.override("zh-hans"):
        assert openstack.nova_cpu_mode().title == "将宿主机 CPU（及其 L3 缓存）透传给实例"
        flavor = openstack.flavor_properties(flavor="f", vcpus=32, numa_nodes=4)
        assert flavor.title == "规格 f 的虚拟机 NUMA 拓扑"
        assert topology.host_topology(host=None).reason.startswith("没有宿主机信息")
    with translation.override("en"):
        assert openstack.nova_cpu_mode().title == "Pass the host CPU (and its L3 cache) through to instances"
